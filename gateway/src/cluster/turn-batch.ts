/**
 * Joins calls made in the same turn of the event loop into one: calls whose shared arguments are
 * equal (the same key, window and limits) collect their own argument (a counter member) and go out
 * together when the turn's I/O callbacks are done (setImmediate), as one Redis script call. Under load
 * the relay's limit checks of a turn then cost one round trip instead of one per request; alone, a call
 * waits only for the end of its turn. The script answers one result per member, in order, as if each
 * call had run alone in the order they were made.
 */
export type BatchSend<R> = (shared: readonly (string | number)[], members: string[]) => Promise<R[]>;

interface Batch<R> {
  shared: readonly (string | number)[];
  members: string[];
  settle: Array<{ resolve: (result: R) => void; reject: (error: unknown) => void }>;
}

/** Few enough that one script call never holds Redis up for long. */
const MAX_BATCH = 256;

export class TurnBatcher<R> {
  readonly #send: BatchSend<R>;
  #pending = new Map<string, Batch<R>>();
  /** The last call's shared arguments and their id. */
  #lastShared: readonly (string | number)[] = [];
  #lastId = '';
  #scheduled = false;

  constructor(send: BatchSend<R>) {
    this.#send = send;
  }

  call(shared: readonly (string | number)[], member: string): Promise<R> {
    const id = this.#idOf(shared);
    let batch = this.#pending.get(id);
    if (!batch || batch.members.length >= MAX_BATCH) {
      if (batch) this.#dispatch(batch);
      batch = { shared, members: [], settle: [] };
      this.#pending.set(id, batch);
    }
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.#flush());
    }
    const joined = batch;
    return new Promise<R>((resolve, reject) => {
      joined.members.push(member);
      joined.settle.push({ resolve, reject });
    });
  }

  /**
   * The id of a batch's shared arguments. Call after call has the same ones (the same user's limits):
   * comparing them with the last call's costs less than joining them anew, and the id the last call
   * made is a string whose hash the Map already knows.
   */
  #idOf(shared: readonly (string | number)[]): string {
    if (!sameArguments(this.#lastShared, shared)) {
      this.#lastId = shared.join('\n');
      this.#lastShared = shared;
    }
    return this.#lastId;
  }

  #flush(): void {
    this.#scheduled = false;
    const batches = this.#pending;
    this.#pending = new Map();
    for (const batch of batches.values()) this.#dispatch(batch);
  }

  #dispatch(batch: Batch<R>): void {
    this.#send(batch.shared, batch.members).then(
      (results) => {
        for (let i = 0; i < batch.settle.length; i++) batch.settle[i]!.resolve(results[i] as R);
      },
      (error: unknown) => {
        for (const waiter of batch.settle) waiter.reject(error);
      },
    );
  }
}

function sameArguments(a: readonly (string | number)[], b: readonly (string | number)[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
