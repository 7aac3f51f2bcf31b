import type { DomainModule } from '../module.js';
import { CollectionSchema } from './collection.entity.js';
import { insertDefaultCollection } from './collections.service.js';
import { PromptVersionSchema } from './prompt-version.entity.js';
import { PromptSchema } from './prompt.entity.js';

export const collectionsModule: DomainModule = {
  name: 'collections',
  entities: [CollectionSchema, PromptSchema, PromptVersionSchema],
  async onWorkspaceCreated(em, workspace, runtime) {
    await insertDefaultCollection(em, workspace, runtime);
  },
};
