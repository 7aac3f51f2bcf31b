import { describe, expect, it } from 'vitest';
import { checkRegistry } from '../../../src/modules/guardrails/checks/registry.js';
import { extractJson } from '../../../src/modules/guardrails/checks/text-utils.js';
import { runCheck } from './helpers.js';

const text = (t: string) => ({ text: t });
const verdictOf = async (id: string, params: Record<string, unknown>, ctx: Parameters<typeof runCheck>[2]) => (await runCheck(id, params, ctx)).verdict;

describe('registry', () => {
  it('holds exactly the catalogue', () => {
    expect([...checkRegistry.keys()].sort()).toEqual(
      [
        'default.alluppercase',
        'default.characterCount',
        'default.contains',
        'default.endsWith',
        'default.isAllLowerCase',
        'default.jsonKeys',
        'default.jsonSchema',
        'default.jwt',
        'default.modelWhitelist',
        'default.regexMatch',
        'default.requiredMetadataKeys',
        'default.sentenceCount',
        'default.validUrls',
        'default.wordCount',
      ].sort(),
    );
  });
});

describe('default.regexMatch', () => {
  it('passes on a match, fails otherwise, inverts with not', async () => {
    const hit = await runCheck('default.regexMatch', { rule: '\\border-\\d+' }, text('see order-42 please'));
    expect(hit).toEqual({
      verdict: true,
      explanation: 'The regex matched the text.',
      data: { rule: '\\border-\\d+', match: { text: 'order-42', index: 4 }, not: false },
    });
    const miss = await runCheck('default.regexMatch', { rule: '\\border-\\d+' }, text('no orders'));
    expect(miss.verdict).toBe(false);
    expect(miss.explanation).toBe('The regex did not match the text.');
    const inverted = await runCheck('default.regexMatch', { rule: 'secret', not: true }, text('nothing to see'));
    expect(inverted.verdict).toBe(true);
    expect(inverted.explanation).toBe('The regex did not match the text. Inverted by not: the check passes.');
    expect(await verdictOf('default.regexMatch', { rule: 'secret', not: true }, text('my secret'))).toBe(false);
  });
});

describe('default.wordCount', () => {
  it('counts words against the range', async () => {
    const r = await runCheck('default.wordCount', { minWords: 2, maxWords: 4 }, text('  one two\nthree  '));
    expect(r).toEqual({ verdict: true, explanation: 'The text has 3 words, within the range 2-4.', data: { wordCount: 3, minWords: 2, maxWords: 4, not: false } });
    expect(await verdictOf('default.wordCount', { minWords: 2, maxWords: 4 }, text('one two three four five'))).toBe(false);
    expect(await verdictOf('default.wordCount', { minWords: 2 }, text('one'))).toBe(false);
    expect(await verdictOf('default.wordCount', { minWords: 1 }, text('   '))).toBe(false);
    expect(await verdictOf('default.wordCount', { minWords: 2, maxWords: 4, not: true }, text('one two three four five'))).toBe(true);
    expect(await verdictOf('default.wordCount', { minWords: 2, maxWords: 4, not: true }, text('one two'))).toBe(false);
  });
  it('defaults to 0-99999', async () => {
    expect((await runCheck('default.wordCount', {}, text('a b'))).data).toMatchObject({ minWords: 0, maxWords: 99999 });
  });
});

describe('default.sentenceCount', () => {
  it('counts sentences, runs of punctuation ending one sentence', async () => {
    const r = await runCheck('default.sentenceCount', { minSentences: 1, maxSentences: 2 }, text('Wait... what?! Fine'));
    expect(r.data?.sentenceCount).toBe(3);
    expect(r.verdict).toBe(false);
    expect(await verdictOf('default.sentenceCount', { minSentences: 2, maxSentences: 3 }, text('Hello there. How are you?'))).toBe(true);
    expect(await verdictOf('default.sentenceCount', { minSentences: 1 }, text(''))).toBe(false);
    expect(await verdictOf('default.sentenceCount', { maxSentences: 1, not: true }, text('One. Two.'))).toBe(true);
    expect(await verdictOf('default.sentenceCount', { maxSentences: 1, not: true }, text('One.'))).toBe(false);
  });
});

describe('default.characterCount', () => {
  it('counts code points', async () => {
    const r = await runCheck('default.characterCount', { minCharacters: 3, maxCharacters: 3 }, text('a😀b'));
    expect(r.data?.characterCount).toBe(3);
    expect(r.verdict).toBe(true);
    expect(await verdictOf('default.characterCount', { maxCharacters: 5 }, text('123456'))).toBe(false);
    expect(await verdictOf('default.characterCount', { maxCharacters: 5, not: true }, text('123456'))).toBe(true);
    expect(await verdictOf('default.characterCount', { maxCharacters: 5, not: true }, text('12345'))).toBe(false);
  });
});

describe('default.contains', () => {
  const t = text('The quick brown fox');
  it('any (default), all, none', async () => {
    expect(await verdictOf('default.contains', { words: ['cat', 'fox'] }, t)).toBe(true);
    expect(await verdictOf('default.contains', { words: ['cat', 'dog'] }, t)).toBe(false);
    expect(await verdictOf('default.contains', { words: ['quick', 'fox'], operator: 'all' }, t)).toBe(true);
    expect(await verdictOf('default.contains', { words: ['quick', 'cat'], operator: 'all' }, t)).toBe(false);
    expect(await verdictOf('default.contains', { words: ['cat', 'dog'], operator: 'none' }, t)).toBe(true);
    expect(await verdictOf('default.contains', { words: ['cat', 'fox'], operator: 'none' }, t)).toBe(false);
    expect(await verdictOf('default.contains', { words: ['Fox'] }, t)).toBe(false); // case-sensitive
  });
  it('explains what it found', async () => {
    const r = await runCheck('default.contains', { words: ['quick', 'cat'], operator: 'all' }, t);
    expect(r.explanation).toBe(`Operator 'all' not satisfied: found "quick"; missing "cat".`);
    expect(r.data).toEqual({ operator: 'all', found: ['quick'], missing: ['cat'] });
  });
});

describe('default.endsWith', () => {
  it('passes on the suffix (trailing whitespace or full stop allowed), inverts with not', async () => {
    expect(await verdictOf('default.endsWith', { suffix: 'Thanks' }, text('Regards. Thanks\n'))).toBe(true);
    expect(await verdictOf('default.endsWith', { suffix: 'Thanks' }, text('Thanks.'))).toBe(true);
    const miss = await runCheck('default.endsWith', { suffix: 'Thanks' }, text('Thanks a lot'));
    expect(miss).toEqual({ verdict: false, explanation: 'The text does not end with "Thanks".', data: { suffix: 'Thanks', not: false } });
    expect(await verdictOf('default.endsWith', { suffix: 'Thanks', not: true }, text('Thanks a lot'))).toBe(true);
    expect(await verdictOf('default.endsWith', { suffix: 'Thanks', not: true }, text('Thanks'))).toBe(false);
  });
});

describe('default.jsonSchema', () => {
  const schema = { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 } }, required: ['name'] };
  it('validates JSON found in the text', async () => {
    const ok = await runCheck('default.jsonSchema', { schema }, text('Here you go:\n```json\n{"name": "Ada", "age": 36}\n```'));
    expect(ok.verdict).toBe(true);
    expect(ok.data?.matchedJson).toEqual({ name: 'Ada', age: 36 });
    const bad = await runCheck('default.jsonSchema', { schema }, text('{"age": -1}'));
    expect(bad.verdict).toBe(false);
    expect(bad.explanation).toBe('No JSON in the text matches the schema.');
    expect(bad.data?.validationErrors).toEqual([{ path: '', message: "must have required property 'name'" }]);
    // The second object of several matches.
    expect(await verdictOf('default.jsonSchema', { schema }, text('first {"x": 1} then {"name": "B"}'))).toBe(true);
  });
  it('inverts with not; text without JSON fails either way', async () => {
    expect(await verdictOf('default.jsonSchema', { schema, not: true }, text('{"age": 3}'))).toBe(true);
    expect(await verdictOf('default.jsonSchema', { schema, not: true }, text('{"name": "x"}'))).toBe(false);
    const none = await runCheck('default.jsonSchema', { schema, not: true }, text('no json here'));
    expect(none).toEqual({ verdict: false, explanation: 'No JSON found in the text.', data: { not: true } });
  });
  it('honours a draft-07 $schema', async () => {
    const d7 = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'array', items: [{ type: 'string' }], additionalItems: false };
    expect(await verdictOf('default.jsonSchema', { schema: d7 }, text('["a"]'))).toBe(true);
    expect(await verdictOf('default.jsonSchema', { schema: d7 }, text('["a", 1]'))).toBe(false);
  });
});

describe('default.jsonKeys', () => {
  const t = text('Result: {"id": 1, "status": "ok"} done');
  it('any (default), all, none', async () => {
    expect(await verdictOf('default.jsonKeys', { keys: ['id', 'missing'] }, t)).toBe(true);
    expect(await verdictOf('default.jsonKeys', { keys: ['nope'] }, t)).toBe(false);
    expect(await verdictOf('default.jsonKeys', { keys: ['id', 'status'], operator: 'all' }, t)).toBe(true);
    const partial = await runCheck('default.jsonKeys', { keys: ['id', 'missing'], operator: 'all' }, t);
    expect(partial).toEqual({
      verdict: false,
      explanation: "Operator 'all' not satisfied: present [id], missing [missing].",
      data: { operator: 'all', presentKeys: ['id'], missingKeys: ['missing'] },
    });
    expect(await verdictOf('default.jsonKeys', { keys: ['secret'], operator: 'none' }, t)).toBe(true);
    expect(await verdictOf('default.jsonKeys', { keys: ['id'], operator: 'none' }, t)).toBe(false);
  });
  it('fails without a JSON object', async () => {
    const r = await runCheck('default.jsonKeys', { keys: ['id'], operator: 'none' }, text('[1, 2]'));
    expect(r.verdict).toBe(false);
    expect(r.explanation).toBe('No JSON object found in the text.');
  });
});

describe('extractJson', () => {
  it('finds whole-text JSON, fenced blocks and embedded objects, braces inside strings included', () => {
    expect(extractJson('[1,2]')).toEqual([[1, 2]]);
    expect(extractJson('a ```json\n{"a":1}\n``` b')).toEqual([{ a: 1 }, { a: 1 }]);
    expect(extractJson('x {"s": "}{"} y {"n": {"m": 2}}')).toEqual([{ s: '}{' }, { n: { m: 2 } }]);
  });
  it('stays linear on many unmatched braces', () => {
    const started = performance.now();
    extractJson('{'.repeat(200_000));
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe('default.validUrls', () => {
  it('passes when every URL is well-formed', async () => {
    const r = await runCheck('default.validUrls', {}, text('See https://example.com/docs?x=1, and http://sub.example.co.uk/a.'));
    expect(r).toEqual({
      verdict: true,
      explanation: 'All 2 URLs are valid.',
      data: { validUrls: ['https://example.com/docs?x=1', 'http://sub.example.co.uk/a'], invalidUrls: [], onlyDNS: false, not: false },
    });
  });
  it('fails on a malformed URL, inverts with not, ignores onlyDNS (no network)', async () => {
    const t = text('Go to https://exa_mple..com and https://ok.example.org');
    const r = await runCheck('default.validUrls', { onlyDNS: true }, t);
    expect(r.verdict).toBe(false);
    expect(r.data?.invalidUrls).toEqual(['https://exa_mple..com']);
    expect(await verdictOf('default.validUrls', {}, text('http://localhost'))).toBe(true);
    expect(await verdictOf('default.validUrls', {}, text('http://nodot'))).toBe(false);
    expect(await verdictOf('default.validUrls', { not: true }, t)).toBe(true);
    expect(await verdictOf('default.validUrls', { not: true }, text('https://example.com'))).toBe(false);
  });
  it('passes vacuously without URLs', async () => {
    const r = await runCheck('default.validUrls', {}, text('no links'));
    expect(r.verdict).toBe(true);
    expect(r.explanation).toBe('The text contains no URLs.');
  });
});

describe('default.alluppercase and default.isAllLowerCase', () => {
  it('look at letters only, in any script', async () => {
    expect(await verdictOf('default.alluppercase', {}, text('HELLO, WORLD 123! ÉTÉ'))).toBe(true);
    expect(await verdictOf('default.alluppercase', {}, text('HELLO World'))).toBe(false);
    expect(await verdictOf('default.alluppercase', {}, text('ÉTé'))).toBe(false);
    expect(await verdictOf('default.alluppercase', { not: true }, text('Hello'))).toBe(true);
    expect(await verdictOf('default.alluppercase', { not: true }, text('HELLO'))).toBe(false);

    expect(await verdictOf('default.isAllLowerCase', {}, text('hello, world 123! été'))).toBe(true);
    const r = await runCheck('default.isAllLowerCase', {}, text('hello World'));
    expect(r).toEqual({ verdict: false, explanation: 'The text contains uppercase letters.', data: { not: false } });
    expect(await verdictOf('default.isAllLowerCase', { not: true }, text('hello World'))).toBe(true);
    expect(await verdictOf('default.isAllLowerCase', { not: true }, text('hello'))).toBe(false);
  });
});

describe('default.modelWhitelist', () => {
  it('reads ctx.model', async () => {
    const models = ['gpt-4o', 'claude-3-5-sonnet'];
    expect(await verdictOf('default.modelWhitelist', { models }, { model: 'gpt-4o' })).toBe(true);
    const r = await runCheck('default.modelWhitelist', { models }, { model: 'gpt-3.5-turbo' });
    expect(r.verdict).toBe(false);
    expect(r.explanation).toBe('Model "gpt-3.5-turbo" is not in the list.');
    expect(await verdictOf('default.modelWhitelist', { models, not: true }, { model: 'gpt-3.5-turbo' })).toBe(true);
    expect(await verdictOf('default.modelWhitelist', { models, not: true }, { model: 'gpt-4o' })).toBe(false);
    expect(await verdictOf('default.modelWhitelist', { models, not: true }, {})).toBe(false);
  });
});

describe('default.requiredMetadataKeys', () => {
  const ctx = { metadata: { team: 'a', env: 'prod' } };
  it('all (default), any, none over ctx.metadata', async () => {
    expect(await verdictOf('default.requiredMetadataKeys', { metadataKeys: ['team', 'env'] }, ctx)).toBe(true);
    const r = await runCheck('default.requiredMetadataKeys', { metadataKeys: ['team', 'user'] }, ctx);
    expect(r).toEqual({
      verdict: false,
      explanation: "Operator 'all' not satisfied: found [team], missing [user].",
      data: { operator: 'all', found_metadata_keys: ['team'], missing_metadata_keys: ['user'] },
    });
    expect(await verdictOf('default.requiredMetadataKeys', { metadataKeys: ['team', 'user'], operator: 'any' }, ctx)).toBe(true);
    expect(await verdictOf('default.requiredMetadataKeys', { metadataKeys: ['user'], operator: 'any' }, ctx)).toBe(false);
    expect(await verdictOf('default.requiredMetadataKeys', { metadataKeys: ['user'], operator: 'none' }, ctx)).toBe(true);
    expect(await verdictOf('default.requiredMetadataKeys', { metadataKeys: ['env'], operator: 'none' }, ctx)).toBe(false);
    expect(await verdictOf('default.requiredMetadataKeys', { metadataKeys: ['toString'] }, {})).toBe(false);
  });
});
