/** The only source of time for the protocol core, so tests can move it. */
export interface Clock {
  /** Milliseconds since the epoch. */
  nowMs(): number;
}

export const systemClock: Clock = { nowMs: () => Date.now() };

/** Whole seconds since the epoch, the unit of every stored timestamp and JWT claim. */
export function nowSeconds(clock: Clock): number {
  return Math.floor(clock.nowMs() / 1000);
}

/** A clock tests can set and advance. */
export class ManualClock implements Clock {
  constructor(private ms: number = Date.now()) {}
  nowMs(): number {
    return this.ms;
  }
  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}
