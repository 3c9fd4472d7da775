import { ConditionalCheckFailedException, GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { ConfigError } from '../core/errors.js';
import { MAX_PAUSES, type PauseMark, type PauseScope, scopeKey, scopeOfKey, sortOut } from '../core/pause.js';
import type { ControlStore } from '../ports/control-store.js';
import { type Item, N, S, type TableRef } from './dynamodb-items.js';

/*
 * The control state in the job store's table: one item, `control#pauses`, without a TTL, holding
 * each pause as an attribute `pause <scope key>` (its mark as JSON) and `version`, which each
 * change adds one to. One strongly consistent GetItem reads them all: a few hundred bytes a pause, at most
 * MAX_PAUSES of them (under 1.7 KB each) within DynamoDB's 400 KB item. A timed pause is not deleted when it
 * runs out (readers compare its `until`); resuming or pausing the same scope again replaces it.
 */

const KEY: Item = { pk: S('control#pauses') };
const PREFIX = 'pause ';

export class DynamoControls implements ControlStore {
  readonly #t: TableRef;

  constructor(table: TableRef) {
    this.#t = table;
  }

  async readPauses(): Promise<{ version: number; marks: readonly PauseMark[] }> {
    const { Item: item } = await this.#t.client.send(new GetItemCommand({ TableName: this.#t.table, Key: KEY, ConsistentRead: true }));
    if (item === undefined) return { version: 0, marks: [] };
    const marks: PauseMark[] = [];
    for (const [name, value] of Object.entries(item)) {
      if (!name.startsWith(PREFIX) || value.S === undefined) continue;
      const mark = markOf(name.slice(PREFIX.length), value.S);
      if (mark !== undefined) marks.push(mark);
    }
    return { version: Number(item.version?.N ?? 0), marks };
  }

  /** Keep `mark`; timed pauses that ended over ENDED_PAUSE_KEPT_MS ago are removed in the same write. */
  async putPause(mark: PauseMark): Promise<number> {
    const { version, marks } = await this.readPauses();
    const key = scopeKey(mark.scope);
    const { kept, ended } = sortOut(marks, key, mark.at);
    if (kept >= MAX_PAUSES) throw new ConfigError(`${MAX_PAUSES} pauses are kept already: resume some first`);
    const body = JSON.stringify({ by: mark.by, reason: mark.reason, at: mark.at, until: mark.until });
    const names: Record<string, string> = { '#p': PREFIX + key, '#kind': 'kind', '#version': 'version' };
    ended.forEach((k, i) => {
      names[`#e${i}`] = PREFIX + k;
    });
    const remove = ended.length === 0 ? '' : ` REMOVE ${ended.map((_, i) => `#e${i}`).join(', ')}`;
    const out = await this.#t.client.send(
      new UpdateItemCommand({
        TableName: this.#t.table,
        Key: KEY,
        UpdateExpression: `SET #p = :p, #kind = :kind ADD #version :one${remove}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ':p': S(body), ':kind': S('control'), ':one': N(1) },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Number(out.Attributes?.version?.N ?? version + 1);
  }

  async removePause(scope: PauseScope): Promise<{ removed: boolean; version: number }> {
    // Only when it is there: a resume of nothing changes no version (and wakes no worker).
    try {
      const out = await this.#t.client.send(
        new UpdateItemCommand({
          TableName: this.#t.table,
          Key: KEY,
          UpdateExpression: 'REMOVE #p ADD #version :one',
          ConditionExpression: 'attribute_exists(#p)',
          ExpressionAttributeNames: { '#p': PREFIX + scopeKey(scope), '#version': 'version' },
          ExpressionAttributeValues: { ':one': N(1) },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return { removed: true, version: Number(out.Attributes?.version?.N ?? 0) };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      return { removed: false, version: (await this.readPauses()).version };
    }
  }
}

/** A stored mark back, or undefined for one this version cannot read (skipped, not fatal). */
function markOf(key: string, json: string): PauseMark | undefined {
  const scope = scopeOfKey(key);
  if (scope === undefined) return undefined;
  try {
    const m = JSON.parse(json) as { by?: unknown; reason?: unknown; at?: unknown; until?: unknown };
    if (typeof m.by !== 'string' || typeof m.at !== 'number') return undefined;
    return {
      scope,
      by: m.by,
      at: m.at,
      ...(typeof m.reason === 'string' ? { reason: m.reason } : {}),
      ...(typeof m.until === 'number' ? { until: m.until } : {}),
    };
  } catch {
    return undefined;
  }
}
