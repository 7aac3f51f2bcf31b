/**
 * Prompt templates are Mustache, as Portkey's are: `{{name}}` substitutes a variable (a missing one
 * renders as nothing, Mustache's rule), `{{#x}}…{{/x}}` / `{{^x}}…{{/x}}` render when `x` is truthy
 * / falsy (and repeat over a list), `{{! …}}` is a comment. Values are not HTML-escaped: a prompt is
 * not HTML. Partials (`{{> name}}`) are refused when the template is written: Gatehouse keeps none.
 *
 * A template that is a JSON array of chat messages (`[{"role":"system","content":"…"}, …]`) renders
 * each message's text separately, so a variable's quotes cannot break the JSON; any other template is
 * the text of one `user` message.
 */
import mustache, { type TemplateSpans } from 'mustache';

export interface TemplateMessage {
  role: string;
  content: string | Array<Record<string, unknown>>;
  [key: string]: unknown;
}

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;

// Templates are rendered once per request from stored text: mustache's own cache (one entry per
// distinct template, never evicted) would only grow, and parsing is cheap.
const writer = new mustache.Writer();
writer.templateCache = undefined;

const noEscape = { escape: (value: unknown) => String(value) };

/** Why `template` cannot be used (a parse error, a partial, a malformed message list), or null. */
export function templateProblem(template: string): string | null {
  const messages = messageList(template);
  if (typeof messages === 'string') return messages;
  const texts = messages ? messages.flatMap(textsOf) : [template];
  for (const text of texts) {
    let spans: TemplateSpans;
    try {
      spans = writer.parse(text);
    } catch (error) {
      return `not a valid Mustache template: ${(error as Error).message}.`;
    }
    if (hasPartial(spans)) return 'partials ({{> name}}) are not supported.';
  }
  return null;
}

/** The chat messages of `template` with `variables` filled in. */
export function renderMessages(template: string, variables: Record<string, unknown>): TemplateMessage[] {
  const render = (text: string) => writer.render(text, variables, {}, noEscape);
  const messages = messageList(template);
  if (typeof messages === 'string') throw new Error(`stored prompt template is invalid: ${messages}`);
  if (!messages) return [{ role: 'user', content: render(template) }];
  return messages.map((message) => ({
    ...message,
    content:
      typeof message.content === 'string'
        ? render(message.content)
        : message.content.map((part) => (part.type === 'text' && typeof part.text === 'string' ? { ...part, text: render(part.text) } : part)),
  }));
}

/**
 * The messages of a JSON message-list template; null for a plain-text template; a string saying
 * what is wrong with a JSON array that is not a list of messages.
 */
function messageList(template: string): TemplateMessage[] | null | string {
  if (!template.trimStart().startsWith('[')) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(template);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length === 0) return 'a JSON message list must hold at least one message.';
  for (const [i, message] of parsed.entries()) {
    const ok =
      typeof message === 'object' &&
      message !== null &&
      (ROLES as readonly string[]).includes(message.role) &&
      (typeof message.content === 'string' || (Array.isArray(message.content) && message.content.every((part: unknown) => typeof part === 'object' && part !== null)));
    if (!ok) return `message ${i} of the JSON message list needs a 'role' (${ROLES.join(', ')}) and a 'content' (a string or an array of parts).`;
  }
  return parsed as TemplateMessage[];
}

function textsOf(message: TemplateMessage): string[] {
  if (typeof message.content === 'string') return [message.content];
  return message.content.flatMap((part) => (part.type === 'text' && typeof part.text === 'string' ? [part.text] : []));
}

function hasPartial(spans: TemplateSpans): boolean {
  return spans.some(([type, , , , children]) => type === '>' || (Array.isArray(children) && hasPartial(children)));
}
