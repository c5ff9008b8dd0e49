/**
 * A trailing-edge debounce: `trigger()` many times, `action` runs once, `delayMs` after the last call.
 *
 * Pure: the timer functions are injectable so tests need no real clock.
 */

export interface Timers {
  set(callback: () => void, delayMs: number): unknown;
  clear(handle: unknown): void;
}

const realTimers: Timers = {
  set: (callback, delayMs) => setTimeout(callback, delayMs),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export class Debouncer {
  private handle: unknown;
  private pending = false;

  constructor(
    private readonly action: () => void,
    private readonly delayMs: number,
    private readonly timers: Timers = realTimers,
  ) {}

  trigger(): void {
    if (this.pending) {
      this.timers.clear(this.handle);
    }
    this.pending = true;
    this.handle = this.timers.set(() => {
      this.pending = false;
      this.action();
    }, this.delayMs);
  }

  dispose(): void {
    if (this.pending) {
      this.timers.clear(this.handle);
      this.pending = false;
    }
  }
}
