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
  #scheduled = false;

  constructor(send: BatchSend<R>) {
    this.#send = send;
  }

  call(shared: readonly (string | number)[], member: string): Promise<R> {
    const id = shared.join('\n');
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
