import { currentVersionKey, currentVersionsOf, promptVersionsOf } from '../src/modules/collections/collection-loaders.js';
import { PromptSchema } from '../src/modules/collections/prompt.entity.js';
import type { PromptVersion } from '../src/modules/collections/prompt-version.entity.js';
import type { Prompt } from '../src/modules/collections/prompt.entity.js';
import * as contract from '../src/modules/collections/prompts.contract.js';
import * as prompts from '../src/modules/collections/prompts.service.js';
import { createPromptCompletion, renderPrompt } from '../src/modules/collections/prompts-render.service.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, type Page } from '../src/lib/paging.js';
import { parseContract } from '../src/lib/contract.js';
import { builder } from './builder.js';
import { ChatCompletionResultRef, virtualKeyArgs } from './chat.js';
import { dataPlane } from './data-plane.js';
import { contractInputType, parseInput } from './contract-input.js';

/*
 * Prompts: templates in collections (schema/collections.ts links them to their collection), their
 * kept versions, and their use (render, completions). Inputs are the contracts of
 * src/modules/collections/prompts.contract.ts; render and completions take the Portkey body as
 * JSON, as chat completions do, and parse it with the same contract as the REST row.
 */

export const PromptStatusEnum = builder.enumType('PromptStatus', {
  description: 'Archived prompts are not listed or counted.',
  values: { active: { description: 'In use.' }, archived: { description: 'Archived.' } } as const,
});

export const PromptVersionRef = builder.objectRef<PromptVersion>('PromptVersion');
export const PromptRef = builder.objectRef<Prompt>('Prompt');

PromptVersionRef.implement({
  description: 'One kept version of a prompt, as it was written.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'UUID.' }),
    version: t.exposeInt('version', { description: 'Version number, from 1.' }),
    name: t.exposeString('name', { description: 'Name at this version.' }),
    template: t.exposeString('template', { description: 'Template text at this version (Portkey’s `string`).' }),
    model: t.exposeString('model', { description: 'Model at this version.' }),
    parameters: t.field({ type: 'JSON', description: 'Model parameters sent with every completion ({} when none).', resolve: (v) => v.parameters ?? {} }),
    virtualKey: t.exposeString('virtualKey', { nullable: true, description: 'The provider slug completions use; null: the request’s.' }),
    versionDescription: t.exposeString('versionDescription', { nullable: true, description: 'What this version changed.' }),
    functions: t.expose('functions', { type: 'JSON', nullable: true, description: 'Function definitions, or null.' }),
    tools: t.expose('tools', { type: 'JSON', nullable: true, description: 'Tool definitions, or null.' }),
    toolChoice: t.expose('toolChoice', { type: 'JSON', nullable: true, description: 'Tool choice, or null.' }),
    templateMetadata: t.expose('templateMetadata', { type: 'JSON', nullable: true, description: 'Free-form metadata, or null.' }),
    labelId: t.exposeID('labelId', { nullable: true, description: 'The label set on this version, or null.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When this version was written.' }),
    prompt: t.field({
      type: PromptRef,
      description: 'The prompt this is a version of.',
      resolve: (v, _args, ctx) => ctx.em.findOneOrFail(PromptSchema, { id: v.promptId }),
    }),
  }),
});

PromptRef.implement({
  description: 'A prompt template in a collection. Every update makes a new version; old ones are kept.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'UUID.' }),
    name: t.exposeString('name', { description: 'Display name.' }),
    slug: t.exposeString('slug', { description: 'Unique in the workspace, never UUID-shaped; usable wherever the id is.' }),
    template: t.exposeString('template', { description: 'Template text (latest version).' }),
    model: t.exposeString('model', { description: 'Model the prompt is for (latest version).' }),
    version: t.exposeInt('version', { description: 'Latest version number, from 1.' }),
    status: t.expose('status', { type: PromptStatusEnum, description: 'Active or archived.' }),
    workspaceId: t.exposeID('workspaceId', { description: 'The owning workspace.' }),
    collectionId: t.exposeID('collectionId', { description: 'The collection holding the prompt.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created.' }),
    lastUpdatedAt: t.expose('lastUpdatedAt', { type: 'DateTime', description: 'When it last changed.' }),
    currentVersion: t.loadable({
      type: PromptVersionRef,
      description: 'The latest version, with its parameters, virtual key, tools and label.',
      load: (keys: string[], ctx) => currentVersionsOf(ctx.em, keys),
      resolve: currentVersionKey,
    }),
    defaultVersion: t.loadable({
      type: PromptVersionRef,
      description: 'The version render and completions use: the one made the default (makePromptVersionDefault), else the latest.',
      load: (keys: string[], ctx) => currentVersionsOf(ctx.em, keys),
      resolve: (prompt) => currentVersionKey({ id: prompt.id, version: prompts.defaultVersionOf(prompt) }),
    }),
    versions: t.loadableList({
      type: PromptVersionRef,
      description: 'Every version, newest first.',
      load: (ids: string[], ctx) => promptVersionsOf(ctx.em, ids),
      resolve: (prompt) => prompt.id,
    }),
  }),
});

const PromptPageRef = builder.objectRef<Page<Prompt>>('PromptPage').implement({
  description: 'One page of prompts and the number of all that match.',
  fields: (t) => ({
    total: t.exposeInt('total', { description: 'Prompts that match, on every page.' }),
    data: t.field({ type: [PromptRef], description: 'This page, newest first.', resolve: (page) => page.data }),
  }),
});

const promptIdArg = builder.args((t) => ({ promptId: t.string({ required: true, description: 'Prompt UUID or slug.' }) }));

builder.queryFields((t) => ({
  prompt: t.field({
    type: PromptRef,
    description: 'One prompt by id or slug (archived ones too).',
    args: {
      idOrSlug: t.arg.string({ required: true, description: 'UUID or slug.' }),
      workspaceId: t.arg.string({ description: 'Workspace (id or slug) to resolve a slug in.' }),
    },
    resolve: (_root, args, ctx) => prompts.getPrompt(ctx, args.idOrSlug, args.workspaceId),
  }),
  prompts: t.field({
    type: PromptPageRef,
    description: 'Active prompts of one workspace, or of one collection of it, newest first.',
    args: {
      workspaceId: t.arg.string({ description: 'Workspace id or slug; default: the caller’s (an organisation key: its default workspace).' }),
      collectionId: t.arg.string({ description: 'Only the prompts of this collection (UUID or slug).' }),
      search: t.arg.string({ description: 'Part of the name, case-insensitive.' }),
      currentPage: t.arg.int({ description: 'Zero-based page number (default 0).' }),
      pageSize: t.arg.int({ description: `Prompts per page, 0 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}); 0 gives only the total.` }),
    },
    resolve: (_root, args, ctx) => prompts.listPrompts(ctx, args),
  }),
  promptVersion: t.field({
    type: PromptVersionRef,
    description: 'One version of a prompt, by its id.',
    args: { ...promptIdArg, versionId: t.arg.string({ required: true, description: 'The version’s UUID.' }) },
    resolve: async (_root, args, ctx) => (await prompts.getPromptVersion(ctx, args.promptId, args.versionId)).version,
  }),
  renderPrompt: t.field({
    type: 'JSON',
    description: 'The chat-completion request a prompt makes with these variables; nothing is sent to a model.',
    args: {
      ...promptIdArg,
      input: t.arg({ type: 'JSON', required: true, description: 'Portkey’s render body: `{variables, …hyperparameters}`.' }),
    },
    resolve: (_root, args, ctx) => renderPrompt(ctx, args.promptId, parseContract(contract.renderPromptContract, args.input)),
  }),
}));

const CreatePromptInput = contractInputType('CreatePromptInput', 'A new prompt, at version 1.', contract.createPromptContract);
const UpdatePromptInput = contractInputType(
  'UpdatePromptInput',
  'Changes to a prompt (at least one); each update makes a new version, omitted fields keep their values.',
  contract.updatePromptContract,
);
const MakeDefaultPromptInput = contractInputType('MakeDefaultPromptInput', 'The version to make the default.', contract.makeDefaultPromptContract);
const UpdatePromptVersionInput = contractInputType('UpdatePromptVersionInput', 'The label of a kept version.', contract.updatePromptVersionContract);

builder.mutationFields((t) => ({
  createPrompt: t.field({
    type: PromptRef,
    description: 'Creates a prompt in a collection.',
    args: { input: t.arg({ type: CreatePromptInput, required: true, description: 'The prompt.' }) },
    resolve: (_root, { input }, ctx) => prompts.createPrompt(ctx, parseInput(contract.createPromptContract, input)),
  }),
  updatePrompt: t.field({
    type: PromptRef,
    description: 'Changes a prompt: a new version, the old ones kept.',
    args: { ...promptIdArg, input: t.arg({ type: UpdatePromptInput, required: true, description: 'The changes.' }) },
    resolve: (_root, args, ctx) => prompts.updatePrompt(ctx, args.promptId, parseInput(contract.updatePromptContract, args.input)),
  }),
  archivePrompt: t.field({
    type: PromptRef,
    description: 'Archives a prompt.',
    args: promptIdArg,
    resolve: (_root, args, ctx) => prompts.archivePrompt(ctx, args.promptId),
  }),
  labelPromptVersion: t.field({
    type: PromptVersionRef,
    description: 'Sets or removes the label of a kept version (its content never changes).',
    args: {
      ...promptIdArg,
      versionId: t.arg.string({ required: true, description: 'The version’s UUID.' }),
      input: t.arg({ type: UpdatePromptVersionInput, required: true, description: 'The label.' }),
    },
    resolve: (_root, args, ctx) => prompts.labelPromptVersion(ctx, args.promptId, args.versionId, parseInput(contract.updatePromptVersionContract, args.input)),
  }),
  makePromptVersionDefault: t.field({
    type: PromptRef,
    description: 'Makes a kept version the one render and completions use; later updates add versions without changing it.',
    args: { ...promptIdArg, input: t.arg({ type: MakeDefaultPromptInput, required: true, description: 'The version.' }) },
    resolve: (_root, args, ctx) => prompts.makeDefaultPromptVersion(ctx, args.promptId, parseInput(contract.makeDefaultPromptContract, args.input)),
  }),
  createPromptCompletion: t.field({
    type: ChatCompletionResultRef,
    description: 'A chat completion of a rendered prompt, under the same enforcement as createChatCompletion.',
    args: {
      ...promptIdArg,
      input: t.arg({ type: 'JSON', required: true, description: 'Portkey’s completions body: `{variables, stream?, …hyperparameters}`.' }),
      ...virtualKeyArgs,
    },
    resolve: (_root, args, ctx) => dataPlane(ctx, () => createPromptCompletion(ctx, args.promptId, parseContract(contract.renderPromptContract, args.input), args.virtualKey)),
  }),
}));
