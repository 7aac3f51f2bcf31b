import { expect } from 'vitest';

/** The same refusal through both front doors: REST's 400 envelope and GraphQL's first error. */
export async function expectBothDoors(
  rest: Promise<{ status: number; body: any }>,
  gql: Promise<{ errors?: any[] }>,
  message: string,
  param: string,
  code: string,
): Promise<void> {
  const r = await rest;
  expect({ status: r.status, body: r.body }).toEqual({ status: 400, body: { error: { message, type: 'invalid_request_error', param, code } } });
  expect((await gql).errors?.[0]).toMatchObject({ message, extensions: { status: 400, param, code } });
}
