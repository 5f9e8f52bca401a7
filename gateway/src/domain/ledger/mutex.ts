/**
 * An async lock, first come first served. The ledger keeps one per account so that database
 * writes on one lease never overlap, while other accounts go on undisturbed.
 */
export class Mutex {
  #locked = false;
  readonly #waiting: Array<() => void> = [];

  get locked(): boolean {
    return this.#locked;
  }

  /** Takes the lock if it is free, without waiting. */
  tryAcquire(): boolean {
    if (this.#locked) return false;
    this.#locked = true;
    return true;
  }

  acquire(): Promise<void> {
    if (this.tryAcquire()) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** Hands the lock to the next waiter, if any, without letting anyone cut in. */
  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#locked = false;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await fn();
    } finally {
      this.release();
    }
  }
}
