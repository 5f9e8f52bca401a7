/**
 * Preloaded into the gateway by bench/gateway-memory.ts (`node --import`): answers the benchmark over the IPC
 * channel with what only the process itself can see (its heap figures) and writes heap snapshots on request.
 * Loads nothing but node built-ins, so it barely changes what it measures.
 */
import v8 from 'node:v8';

export interface HeapFigures {
  heapUsed: number;
  heapTotal: number;
  /** Pages of the heap actually in memory (heapTotal counts reserved ones too). */
  heapResident: number;
  external: number;
  arrayBuffers: number;
  /** Compiled code and its metadata (part of heapTotal), from v8.getHeapCodeStatistics. */
  code: number;
}

type Request = { id: number; kind: 'figures' } | { id: number; kind: 'snapshot'; file: string };

if (process.send) {
  process.on('message', (request: Request) => {
    if (request.kind === 'figures') {
      const usage = process.memoryUsage();
      const code = v8.getHeapCodeStatistics();
      const figures: HeapFigures = {
        heapUsed: usage.heapUsed,
        heapTotal: usage.heapTotal,
        heapResident: v8.getHeapSpaceStatistics().reduce((sum, space) => sum + space.physical_space_size, 0),
        external: usage.external,
        arrayBuffers: usage.arrayBuffers,
        code: code.code_and_metadata_size + code.bytecode_and_metadata_size,
      };
      process.send?.({ id: request.id, figures });
    } else {
      process.send?.({ id: request.id, file: v8.writeHeapSnapshot(request.file) });
    }
  });
  // The channel must not keep a stopping gateway alive.
  process.channel?.unref();
}
