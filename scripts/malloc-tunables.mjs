// glibc's malloc keeps freed memory at the top of its main arena until it exceeds a threshold that grows with
// the largest block ever freed: after the gateway parses the tokenizer's 2.4 MB vocabulary module on its first
// counted request, about 20 MiB stay resident that nothing uses (`node bench/gateway-memory.ts postgres` shows the
// [heap] mapping). A fixed 4 MiB threshold hands it back: idle RSS after the first chat 148–150 MiB instead of
// 163–171 (Postgres + Redis). Every launcher sets it: the image (deploy/gateway.Dockerfile, checked by
// tests/k8s/images.test.ts), `npm start` and the benches. A value the caller set is kept.
export const mallocTunables = 'glibc.malloc.trim_threshold=4194304';

/** The environment with the malloc setting added, unless GLIBC_TUNABLES is already set. */
export function withMallocTunables(env) {
  return env.GLIBC_TUNABLES ? env : { ...env, GLIBC_TUNABLES: mallocTunables };
}
