import { p } from '@mikro-orm/core';

/**
 * What a prompt version holds besides its name, template and model: stored on every version row
 * and, for the current version, on the prompt. Every column is nullable: prompts written before
 * these columns existed have none of them.
 */
export type JsonObject = Record<string, unknown>;

/** The columns, built afresh for each entity that holds them. */
export const promptSettingsProperties = () => ({
  parameters: p.json<JsonObject>().nullable(),
  virtualKey: p.string().nullable(),
  versionDescription: p.text().nullable(),
  functions: p.json<JsonObject[]>().nullable(),
  tools: p.json<JsonObject[]>().nullable(),
  toolChoice: p.json<JsonObject | string>().nullable(),
  templateMetadata: p.json<JsonObject>().nullable(),
});

export interface PromptSettings {
  parameters: JsonObject | null;
  virtualKey: string | null;
  versionDescription: string | null;
  functions: JsonObject[] | null;
  tools: JsonObject[] | null;
  toolChoice: JsonObject | string | null;
  templateMetadata: JsonObject | null;
}

const SETTING_KEYS = Object.keys(promptSettingsProperties()) as (keyof PromptSettings)[];

/** The settings of a prompt or version, for copying onto a new version row. */
export function settingsOf(from: { [K in keyof PromptSettings]?: PromptSettings[K] | null }): PromptSettings {
  return Object.fromEntries(SETTING_KEYS.map((key) => [key, from[key] ?? null])) as unknown as PromptSettings;
}
