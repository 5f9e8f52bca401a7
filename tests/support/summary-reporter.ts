import type { Reporter, TestModule, TestRunEndReason } from 'vitest/node';

/**
 * Ends the run with one plain line, "N passed, N failed, N skipped", that any CI log reader understands.
 * Files that failed to load count as failures, so a broken import can't pass as "0 failed".
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>, reason: TestRunEndReason) {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    for (const module of modules) {
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) failed++;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
    }
    // A run that failed outside any test (global setup, say) still reports a failure.
    if (reason === 'failed' && failed === 0) failed = 1;
    console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
  }
}
