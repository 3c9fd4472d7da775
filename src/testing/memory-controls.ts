import { ConfigError } from '../core/errors.js';
import { MAX_PAUSES, type PauseMark, type PauseScope, scopeKey, sortOut } from '../core/pause.js';
import type { ControlStore } from '../ports/control-store.js';

/**
 * The control state (pauses) in memory, with the rules of DynamoDB's (test/contracts/control-store-port.test.ts
 * runs both): one mark per scope, a version that grows with each change, a resume of nothing
 * changing nothing.
 */
export class MemoryControls implements ControlStore {
  readonly #marks = new Map<string, PauseMark>();
  #version = 0;

  async readPauses(): Promise<{ version: number; marks: readonly PauseMark[] }> {
    return { version: this.#version, marks: [...this.#marks.values()] };
  }

  async putPause(mark: PauseMark): Promise<number> {
    const key = scopeKey(mark.scope);
    const { kept, ended } = sortOut([...this.#marks.values()], key, mark.at);
    if (kept >= MAX_PAUSES) throw new ConfigError(`${MAX_PAUSES} pauses are kept already: resume some first`);
    for (const k of ended) this.#marks.delete(k);
    this.#marks.set(key, { ...mark });
    return ++this.#version;
  }

  async removePause(scope: PauseScope): Promise<{ removed: boolean; version: number }> {
    if (!this.#marks.delete(scopeKey(scope))) return { removed: false, version: this.#version };
    return { removed: true, version: ++this.#version };
  }
}
