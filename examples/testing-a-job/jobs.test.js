// @ts-check
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runHandler } from 'sqs-jobs/testing';
import { importFile, importRow } from './jobs.js';

test('a row runs as a worker would run it, with its attempt and progress', async () => {
  const run = await runHandler(importRow, { file: 'a.csv', row: 3 }, { attempt: 2 });
  assert.deepEqual(run.result, { file: 'a.csv', row: 3, attempt: 2 });
  assert.deepEqual([run.progress.done, run.progress.total], [1, 1]);
});

test('a row that can never succeed is unrecoverable (it goes straight to the DLQ)', async () => {
  await assert.rejects(runHandler(importRow, { file: 'a.xls', row: 0 }), { code: 'UNRECOVERABLE' });
});

test('args the schema refuses fail as enqueue would, naming the field', async () => {
  await assert.rejects(runHandler(importRow, { file: '', row: -1 }), /args\.file|args\.row/);
});

test('an import fans out one row per line, each checked by its schema', async () => {
  const run = await runHandler(importFile, { file: 'b.csv', rows: 3 });
  assert.equal(run.fanOuts.length, 1);
  assert.equal(run.fanOuts[0].job, 'import-row');
  assert.deepEqual(
    run.fanOuts[0].argsList,
    [0, 1, 2].map((row) => ({ file: 'b.csv', row })),
  );
});
