import { createCollectionBody, getCollectionQuery, listCollectionsQuery, updateCollectionBody } from '../bodies/collections.js';
import { collectionsContract, graphqlInput } from '../../schema/contracts.js';
import type { RouteRow } from '../route.js';

/** Collections: `{collectionId}` is a UUID or a slug. */
export const collectionsRoutes: RouteRow[] = [
  {
    method: 'POST',
    path: '/v1/collections',
    operation: 'RestCreateCollection',
    body: createCollectionBody,
    variables: ({ body }) => ({ input: graphqlInput(collectionsContract.createCollectionContract, body) }),
  },
  {
    method: 'GET',
    path: '/v1/collections',
    operation: 'RestListCollections',
    query: listCollectionsQuery,
    variables: ({ query }) => ({
      workspaceId: query.workspace_id,
      search: query.search,
      currentPage: query.current_page,
      pageSize: query.page_size,
    }),
  },
  {
    method: 'GET',
    path: '/v1/collections/:collectionId',
    operation: 'RestGetCollection',
    query: getCollectionQuery,
    variables: ({ params, query }) => ({ collectionId: params.collectionId, workspaceId: query.workspace_id }),
  },
  {
    method: 'PUT',
    path: '/v1/collections/:collectionId',
    operation: 'RestUpdateCollection',
    body: updateCollectionBody,
    variables: ({ params, body }) => ({ collectionId: params.collectionId, input: graphqlInput(collectionsContract.updateCollectionContract, body) }),
    result: () => ({}),
  },
  {
    method: 'DELETE',
    path: '/v1/collections/:collectionId',
    operation: 'RestArchiveCollection',
    variables: ({ params }) => ({ collectionId: params.collectionId }),
    result: () => ({}),
  },
];
