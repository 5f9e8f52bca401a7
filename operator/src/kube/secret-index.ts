/**
 * Which resources use which Secret (a field index in controller-runtime's terms): a Channel reads its
 * keySecretRef, an AccessToken writes its token Secret. When a Secret changes, every resource that
 * uses it is reconciled again, so a rotated key reaches the channel within seconds.
 */
export class SecretIndex {
  /** `namespace/secret` -> resource keys. */
  readonly #bySecret = new Map<string, Set<string>>();
  /** resource key -> `namespace/secret` entries. */
  readonly #byResource = new Map<string, string[]>();

  /** Records the Secrets (names in `namespace`) a resource uses, replacing what it used before. */
  set(resourceKey: string, namespace: string, secretNames: readonly string[]): void {
    this.remove(resourceKey);
    const entries = [...new Set(secretNames.filter((name) => name !== ''))].map((name) => `${namespace}/${name}`);
    if (entries.length === 0) return;
    this.#byResource.set(resourceKey, entries);
    for (const entry of entries) {
      let keys = this.#bySecret.get(entry);
      if (!keys) {
        keys = new Set();
        this.#bySecret.set(entry, keys);
      }
      keys.add(resourceKey);
    }
  }

  remove(resourceKey: string): void {
    for (const entry of this.#byResource.get(resourceKey) ?? []) {
      const keys = this.#bySecret.get(entry);
      keys?.delete(resourceKey);
      if (keys?.size === 0) this.#bySecret.delete(entry);
    }
    this.#byResource.delete(resourceKey);
  }

  /** The resources that use the Secret. */
  lookup(namespace: string, secretName: string): string[] {
    return [...(this.#bySecret.get(`${namespace}/${secretName}`) ?? [])];
  }
}
