/**
 * The prompts' operation inputs, each one schema in wire terms (Portkey's prompt API): the REST row
 * validates its body with it, the GraphQL resolver parses its input with it, and GraphQL's input
 * types are derived from it (schema/contract-input.ts), so both front doors refuse the same input
 * with the same message and `param`. Names stay with the service's `validateName`, which workspaces
 * share; where a collection or prompt is needs stored data and is the service's too.
 */
import { z } from 'zod';
import { oneOf, refuse, text } from '../../lib/contract.js';
import { templateProblem } from './prompt-template.js';

export const TEMPLATE_MAX = 100_000;
const MODEL_MAX = 255;
const DESCRIPTION_MAX = 1000;

const template = text({ max: TEMPLATE_MAX }).superRefine((value, ctx) => {
  const problem = templateProblem(value);
  if (problem) refuse(ctx, 'invalid_value', problem);
});

const object = () => z.record(z.unknown());

export const TOOL_CHOICES = ['none', 'auto', 'required'] as const;

/** What a version holds besides the template: every field optional, as `PUT` backfills it. */
const versionFields = {
  parameters: object().nullish().describe('Model parameters sent with every completion (temperature, max_tokens, …); default {}.'),
  model: text({ max: MODEL_MAX }).nullish().describe('The model the prompt runs on (`@<virtual-key>/<model>` names the provider too).'),
  virtual_key: text({ max: MODEL_MAX }).nullish().describe('The provider slug completions use; default: the request’s virtual key header.'),
  version_description: text({ max: DESCRIPTION_MAX, allowEmpty: true }).nullish().describe('What this version changed.'),
  functions: z.array(object()).nullish().describe('Function definitions sent with every completion.'),
  tools: z.array(object()).nullish().describe('Tool definitions sent with every completion.'),
  // Portkey's prompt documents an object, its chat request a string or a named function: both are
  // taken, and each answer gives its own document's form (`{type: "auto"}` ⇄ `"auto"`).
  tool_choice: z
    .union([
      oneOf(TOOL_CHOICES),
      z.object({ type: oneOf(TOOL_CHOICES) }).strict(),
      z.object({ type: z.literal('function'), function: z.object({ name: text() }) }),
    ])
    .nullish()
    .describe('Which tool the model uses: `none`, `auto`, `required` (or `{type: …}` of them) or `{type: "function", function: {name}}`; sent with every completion.'),
  template_metadata: object().nullish().describe('Free-form metadata kept with the version.'),
};

export const createPromptContract = z
  .object({
    name: z.string().describe('Display name (1–255 characters); the slug is derived from it.'),
    collection_id: z.string().describe('Collection (UUID or slug) to hold it; the prompt lives in its workspace.'),
    string: template.describe('The Mustache template: plain text (one user message) or a JSON list of chat messages.'),
    ...versionFields,
    model: text({ max: MODEL_MAX }).describe('The model the prompt runs on (`@<virtual-key>/<model>` names the provider too).'),
  })
  .strict();

export const updatePromptContract = z
  .object({
    name: z.string().nullish().describe('New display name (the slug stays).'),
    collection_id: z.string().nullish().describe('Another collection of the same workspace to move it to.'),
    string: template.nullish().describe('New Mustache template.'),
    ...versionFields,
    patch: z.boolean().nullish().describe('Accepted for Portkey clients: omitted fields always keep their current values.'),
  })
  .strict();

/**
 * Render and completions: `variables` fill the template; every other key is a chat-completion
 * parameter that overrides the stored one (`messages` are added after the template's), as Portkey
 * passes hyperparameters at the root. Unknown keys travel to the provider, as on chat completions.
 */
export const renderPromptContract = z
  .object({
    variables: object().describe('Values of the template’s variables; a missing one renders as nothing.'),
    stream: z.boolean().nullish().describe('Completions only: answer with server-sent chunks.'),
    // The portkey-ai SDK's `prompts.render` sends the prompt's id in the body too (its `promptID`,
    // snake-cased on the way out); the path already names the prompt.
    prompt_id: z.string().nullish().describe('Ignored (the path names the prompt).'),
    messages: z.array(object()).nullish().describe('Messages added after the template’s.'),
  })
  .passthrough();

export const updatePromptVersionContract = z
  .object({
    label_id: z.string().uuid('expected a UUID.').nullish().describe('A label for the version (a UUID); null removes it.'),
  })
  .strict();

export const makeDefaultPromptContract = z
  .object({
    version: z.number().int('expected a whole number.').positive('expected a version number, from 1.').describe('The version number to make the default.'),
  })
  .strict();

export type CreatePromptInput = z.output<typeof createPromptContract>;
export type UpdatePromptInput = z.output<typeof updatePromptContract>;
export type RenderPromptInput = z.output<typeof renderPromptContract>;
export type UpdatePromptVersionInput = z.output<typeof updatePromptVersionContract>;
export type MakeDefaultPromptInput = z.output<typeof makeDefaultPromptContract>;
