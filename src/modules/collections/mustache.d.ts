/** The part of mustache@4 that prompt-template.ts uses (the package ships no types of its own). */
declare module 'mustache' {
  /** A parsed tag: `[type, name, start, end, children?, ...]`; type `'>'` is a partial. */
  export type TemplateSpans = Array<[string, string, number, number, TemplateSpans?, ...unknown[]]>;

  export class Writer {
    /** Parsed templates by text; `undefined` turns the cache off. */
    templateCache: unknown;
    parse(template: string): TemplateSpans;
    render(template: string, view: unknown, partials?: Record<string, string>, config?: { escape?: (value: unknown) => string }): string;
  }

  const mustache: { Writer: typeof Writer };
  export default mustache;
}
