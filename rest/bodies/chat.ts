import { z } from 'zod';

// Model traffic bodies are OpenAI's, and fields this gateway does not know travel to the provider
// untouched: only "a JSON object" is checked here; the service checks what it reads (model,
// messages, input, stream…), so GraphQL callers get the same answers.
export const modelRequestBody = z.record(z.string(), z.unknown());
