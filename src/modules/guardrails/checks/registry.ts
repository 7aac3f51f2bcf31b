import type { GuardrailCheck } from './check.js';
import { allLowercase } from './all-lowercase.js';
import { allUppercase } from './all-uppercase.js';
import { characterCount } from './character-count.js';
import { contains } from './contains.js';
import { endsWith } from './ends-with.js';
import { jsonKeys } from './json-keys.js';
import { jsonSchema } from './json-schema.js';
import { jwt } from './jwt.js';
import { modelWhitelist } from './model-whitelist.js';
import { regexMatch } from './regex-match.js';
import { requiredMetadataKeys } from './required-metadata-keys.js';
import { sentenceCount } from './sentence-count.js';
import { validUrls } from './valid-urls.js';
import { wordCount } from './word-count.js';

const all: GuardrailCheck[] = [
  jwt,
  regexMatch,
  wordCount,
  sentenceCount,
  characterCount,
  contains,
  endsWith,
  jsonSchema,
  jsonKeys,
  validUrls,
  allUppercase,
  allLowercase,
  modelWhitelist,
  requiredMetadataKeys,
];

/** Check id (as stored and sent on the wire, e.g. `default.jwt`) → check. */
export const checkRegistry: ReadonlyMap<string, GuardrailCheck> = new Map(all.map((c) => [c.id, c]));

export function getCheck(id: string): GuardrailCheck | undefined {
  return checkRegistry.get(id);
}
