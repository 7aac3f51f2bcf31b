import { parseArgs } from 'node:util';
import type { ServiceContext } from '../context.js';

/*
 * The CLI's commands are declared, not parsed by hand: each names its options, and this file
 * turns argv into a command and its values, answers --help per command, and words every mistake
 * in the command line as one line (exit status 2) instead of a stack trace.
 */

export interface OptionSpec {
  type: 'string' | 'boolean';
  /** The value's placeholder in help (`--name NAME`). */
  value?: string;
  description: string;
  required?: boolean;
  /** The values a string option accepts. */
  choices?: readonly string[];
}

export type Values = Record<string, string | boolean | undefined>;

/** What a command prints: the JSON of `--json`, and the text otherwise. */
export interface Output {
  json: unknown;
  text: string;
}

export interface Command {
  /** `keys create`, or a single word (`usage`). */
  name: string;
  summary: string;
  /** Positional arguments, in order, all required (`['ID']`). */
  args?: readonly string[];
  options: Record<string, OptionSpec>;
  run(ctx: ServiceContext, values: Values, args: string[]): Promise<Output>;
}

/** A mistake in the command line: printed as one line, exit status 2. */
export class UsageError extends Error {}

const COMMON: Record<string, OptionSpec> = {
  json: { type: 'boolean', description: 'print JSON instead of text' },
  help: { type: 'boolean', description: 'show this help' },
};

export type Parsed =
  /** Help asked for (status 0), or shown because the command line stopped short (status 2). */
  | { kind: 'help'; text: string; status: 0 | 2 }
  | { kind: 'run'; command: Command; values: Values; args: string[] };

/** The command argv names, with its checked values; throws UsageError for any mistake. */
export function parseCommandLine(commands: readonly Command[], argv: string[], overview: string): Parsed {
  const words = argv.slice(0, 2).filter((word) => !word.startsWith('-'));
  const command = commands.find((c) => c.name === words.join(' ')) ?? commands.find((c) => c.name === words[0]);
  if (!command) {
    const wantsHelp = argv.includes('--help') || argv.includes('-h');
    const group = commands.filter((c) => c.name.split(' ')[0] === words[0]);
    const status = wantsHelp ? 0 : 2;
    if (group.length && (wantsHelp || words.length === 1)) return { kind: 'help', text: groupHelp(words[0], group), status };
    if (!argv.length || (!words.length && wantsHelp)) return { kind: 'help', text: overview, status };
    if (!words.length) throw new UsageError(`Unknown option '${argv[0]}'. Run 'gatehouse --help' for the commands.`);
    const scope = group.length ? `gatehouse ${words[0]} --help` : 'gatehouse --help';
    throw new UsageError(`Unknown command: ${words.join(' ')}. Run '${scope}' for the commands.`);
  }
  const rest = argv.slice(command.name.split(' ').length);
  const seeHelp = `Run 'gatehouse ${command.name} --help'.`;
  const options = { ...command.options, ...COMMON };
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ args: rest, strict: true, allowPositionals: true, options: Object.fromEntries(Object.entries(options).map(([name, o]) => [name, { type: o.type }])) });
  } catch (error) {
    throw new UsageError(`${argumentProblem(error)} ${seeHelp}`);
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: 'help', text: commandHelp(command), status: 0 };
  const expected = command.args ?? [];
  if (positionals.length < expected.length) throw new UsageError(`'gatehouse ${command.name}' needs ${expected.slice(positionals.length).join(' ')}. ${seeHelp}`);
  if (positionals.length > expected.length) throw new UsageError(`Unexpected argument '${positionals[expected.length]}' for 'gatehouse ${command.name}'. ${seeHelp}`);
  for (const [name, spec] of Object.entries(command.options)) {
    const value = values[name];
    if (spec.required && value === undefined) throw new UsageError(`'gatehouse ${command.name}' needs --${name}. ${seeHelp}`);
    if (spec.choices && typeof value === 'string' && !spec.choices.includes(value)) {
      throw new UsageError(`Invalid value for --${name}: '${value}' (expected ${spec.choices.join(', ')}). ${seeHelp}`);
    }
  }
  return { kind: 'run', command, values, args: positionals };
}

/** node:util's parse errors, in one line of our own words. */
function argumentProblem(error: unknown): string {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  const option = /'(-[^']*)'/.exec(message)?.[1] ?? /(--?[\w-]+)/.exec(message)?.[1] ?? '';
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `Unknown option '${option}'.`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      return message.includes('argument missing') ? `Option '${option.split(' ')[0]}' needs a value.` : `Option '${option.split(' ')[0]}' takes no value.`;
    default:
      return message.split('\n')[0];
  }
}

/** `--name NAME` for a string option, `--json` for a boolean one. */
function flagOf(name: string, spec: OptionSpec): string {
  return spec.type === 'string' ? `--${name} ${spec.value ?? name.toUpperCase()}` : `--${name}`;
}

function optionLine(name: string, spec: OptionSpec): string {
  const flag = flagOf(name, spec);
  const choices = spec.choices ? ` (${spec.choices.join(', ')})` : '';
  return `  ${flag.padEnd(28)} ${spec.description}${choices}${spec.required ? ' [required]' : ''}`;
}

export function usageLine(command: Command): string {
  const args = (command.args ?? []).join(' ');
  const options = Object.entries(command.options)
    .map(([name, spec]) => (spec.required ? flagOf(name, spec) : `[${flagOf(name, spec)}]`))
    .join(' ');
  return ['gatehouse', command.name, args, options, '[--json]'].filter(Boolean).join(' ');
}

export function commandHelp(command: Command): string {
  const options = Object.entries({ ...command.options, ...COMMON }).map(([name, spec]) => optionLine(name, spec));
  return `Usage: ${usageLine(command)}\n\n${command.summary}\n\nOptions:\n${options.join('\n')}`;
}

function groupHelp(noun: string, group: readonly Command[]): string {
  return `Usage: gatehouse ${noun} <command> [options]\n\nCommands:\n${group.map((c) => `  ${c.name.padEnd(22)} ${c.summary}`).join('\n')}\n\nRun 'gatehouse ${noun} <command> --help' for a command's options.`;
}
