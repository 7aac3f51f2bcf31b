// The data plane's side of `PUT /v1/integrations/{slug}/models`: a request for a model the
// integration does not offer is refused before any model work (an admission check of the runs'
// hooks, so chat completions, embeddings and runs all pass through it).
import { BadRequestError } from '../../errors.js';
import type { Admission, ModelWorkContext } from '../runs/admission.js';
import { isOffered } from './models.js';

export async function refuseModelsNotOffered(_ctx: ModelWorkContext, admission: Admission): Promise<void> {
  const { model } = admission.request;
  const { integration } = admission.provider;
  if (!isOffered(integration.models, model)) {
    throw new BadRequestError(`Model '${model}' is not offered by integration '${integration.slug}': enable it with PUT /v1/integrations/${integration.slug}/models.`, {
      param: 'model',
      code: 'model_not_offered',
    });
  }
}
