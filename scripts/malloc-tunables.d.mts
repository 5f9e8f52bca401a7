export declare const mallocTunables: string;
export declare function withMallocTunables<T extends Record<string, string | undefined>>(
  env: T,
): T & { GLIBC_TUNABLES: string };
