import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineBatchJob } from '../../../src/core/batch-job.js';
import { type AnyDefinition, defineJob } from '../../../src/core/job.js';
import { openApiDocument } from '../../../src/http/openapi.js';

const invite = defineJob({
  name: 'team.invite',
  args: z.object({
    email: z.email(),
    role: z.enum(['admin', 'member']).default('member'),
    note: z.string().max(200).optional(),
    when: z.iso.datetime().optional(),
  }),
  handle: () => {},
});
const index = defineBatchJob({
  name: 'index',
  args: z.object({ docId: z.string() }),
  key: () => 'all',
  maxSize: 10,
  maxWaitMs: 1_000,
  handle: () => {},
});

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document, with one enqueue operation per job and its args as the body', async () => {
    const doc = openApiDocument(
      new Map<string, AnyDefinition>([
        [invite.name, invite],
        [index.name, index],
      ]),
      { basePath: '/api', statusRoute: true, cancelRoute: true },
    );
    const result = await new Validator().validate(doc as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    const paths = doc.paths as Record<string, Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>>;
    expect(Object.keys(paths).sort()).toEqual(['/api/jobs/index', '/api/jobs/team.invite', '/api/jobs/{jobId}', '/api/openapi.json']);
    expect(Object.keys(paths['/api/jobs/{jobId}']!).sort()).toEqual(['delete', 'get']);
    const body = paths['/api/jobs/team.invite']!.post!.requestBody!.content['application/json']!.schema;
    // The input side: a field with a default is optional to send.
    expect(body).toMatchObject({
      type: 'object',
      required: ['email'],
      properties: { email: { type: 'string', format: 'email' }, role: { enum: ['admin', 'member'], default: 'member' } },
    });
    // A key becomes the job id, read at {jobId}: an offered job's own path serves only POST.
    const post = (paths['/api/jobs/index'] as Record<string, { parameters: { name: string; schema: unknown }[] }>).post!;
    expect(post.parameters.find((p) => p.name === 'Idempotency-Key')!.schema).toMatchObject({ not: { enum: ['index', 'team.invite'] } });
  });

  it('without a job store it offers no status route and promises no Location', async () => {
    const doc = openApiDocument(new Map([[invite.name, invite]]), { basePath: '', statusRoute: false, cancelRoute: false });
    expect((await new Validator().validate(doc as Parameters<Validator['validate']>[0])).valid).toBe(true);
    const paths = doc.paths as Record<string, unknown>;
    expect(Object.keys(paths).sort()).toEqual(['/jobs/team.invite', '/openapi.json']);
    expect(JSON.stringify(doc)).not.toMatch(/Location/);
    expect(JSON.stringify(doc)).not.toMatch(/"not"/);
  });
});
