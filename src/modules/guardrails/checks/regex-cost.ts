// ret's entry replaces module.exports by the tokenizer, which its typings do not describe; its own
// modules export plainly, so they are imported one by one.
import { tokenizer } from 'ret/dist/tokenizer.js';
import { types, type Root, type Token } from 'ret/dist/types/index.js';
import { setBounded } from '../../../lib/bounded-map.js';

/**
 * Whether a user pattern can run on a text without the time budget (time-budget.ts), whose
 * node:vm watchdog costs about half a millisecond per call, more than the whole check.
 *
 * Packages such as safe-regex2 judge the pattern alone (star height ≤ 1), which misses
 * `(a|a)*$` (exponential) and `a*a*a*b` (a polynomial of high degree). Here the pattern, parsed by
 * `ret` (the tokenizer safe-regex2 uses), gives an upper bound on a backtracking matcher's work on
 * a text of length n: at each of the n + 1 start positions the matcher explores a tree whose
 * leaves are distinct combinations of choices (an alternative of each alternation, an iteration
 * count of each repetition, at most n + 1 counts since every iteration but the last consumes a
 * character) and whose paths are at most `depth` token matches long. The pattern runs directly
 * only when (n + 1) × leaves × depth is at most BOUND steps (milliseconds at worst); anything
 * else — a larger product, a backreference (no such bound exists), a pattern `ret` cannot read —
 * keeps the budget. Lookarounds count as groups (over-counted, never under).
 */
const BOUND = 1_000_000;
/**
 * What is known of each rule (the rules of a few guardrails, read on every request): its parse
 * (null when not readable), and the text lengths already judged. The bound only grows with the
 * text (more start positions, more iteration counts), so a length at most `within` runs directly
 * and one at least `beyond` does not, without walking the pattern again.
 */
interface Known {
  root: Root | null;
  within: number;
  beyond: number;
}
const known = new Map<string, Known>();
const KNOWN_LIMIT = 1_000;

interface Cost {
  /** Leaves of the choice tree. */
  paths: number;
  /** Token matches along one path. */
  depth: number;
}

const TOO_MUCH: Cost = { paths: Infinity, depth: Infinity };
const cap = (x: number) => Math.min(x, BOUND + 1);

export function runsWithinBound(rule: string, textLength: number): boolean {
  const facts = knownOf(rule);
  if (!facts.root || textLength >= facts.beyond) return false;
  if (textLength <= facts.within) return true;
  const cost = alternatives(facts.root, textLength);
  const within = (textLength + 1) * cost.paths * cost.depth <= BOUND;
  if (within) facts.within = textLength;
  else facts.beyond = textLength;
  return within;
}

function knownOf(rule: string): Known {
  let facts = known.get(rule);
  if (facts === undefined) {
    let root: Root | null = null;
    // `\k<name>` is a named backreference; ret would read it as the letter k.
    try {
      if (!/\\k</.test(rule)) root = tokenizer(rule);
    } catch {
      // Not readable: not proven.
    }
    facts = { root, within: -1, beyond: Infinity };
    setBounded(known, rule, facts, KNOWN_LIMIT);
  }
  return facts;
}

function alternatives(node: { stack?: Token[]; options?: Token[][] }, n: number): Cost {
  if (!node.options) return sequence(node.stack ?? [], n);
  let paths = 0;
  let depth = 0;
  for (const option of node.options) {
    const cost = sequence(option, n);
    paths = cap(paths + cost.paths);
    depth = Math.max(depth, cost.depth);
  }
  return { paths, depth };
}

function sequence(tokens: Token[], n: number): Cost {
  let paths = 1;
  let depth = 0;
  for (const token of tokens) {
    const cost = costOf(token, n);
    paths = cap(paths * cost.paths);
    depth = cap(depth + cost.depth);
  }
  return { paths, depth };
}

function costOf(token: Token, n: number): Cost {
  switch (token.type) {
    case types.CHAR:
    case types.SET:
    case types.POSITION:
      return { paths: 1, depth: 1 };
    case types.GROUP:
      return alternatives(token, n);
    case types.REPETITION: {
      const inner = costOf(token.value, n);
      const most = Math.max(token.min, Math.min(token.max, n + 1));
      // One leaf per iteration count and per choice inside each iteration: Σ inner.paths^k, k = min..most.
      let paths = inner.paths === 1 ? cap(most - token.min + 1) : 0;
      for (let k = token.min, power = cap(inner.paths ** k); inner.paths > 1 && k <= most && paths <= BOUND; k++, power = cap(power * inner.paths)) {
        paths = cap(paths + power);
      }
      return { paths, depth: cap(most * inner.depth) };
    }
    default:
      return TOO_MUCH;
  }
}
