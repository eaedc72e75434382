/**
 * The Events an in-memory run records: one shape for what-if and for the unit-test worlds, so a
 * test reads the same `RecordedEvent` whichever controller it drives. Pure: no I/O.
 */
import type { EventObjectRef, EventSink } from '../kube/types.js';
import type { Clock } from '../util/clock.js';

/** One Event a controller recorded: the object it is about, and `atMs` (epoch milliseconds on the injected clock). */
export interface RecordedEvent {
  ref: EventObjectRef;
  type: string;
  reason: string;
  message: string;
  atMs: number;
}

/**
 * An {@link EventSink} that keeps every Event in {@link list}, in the order recorded, stamped with
 * the clock's time (epoch milliseconds). Mirrors client-go's `record.FakeRecorder`, which tests
 * read the same way. Never throws.
 */
export class RecordingEventSink implements EventSink {
  readonly list: RecordedEvent[] = [];
  readonly #clock: Clock;

  /** @param clock the run's clock (a FakeClock in tests and what-if). */
  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Appends the Event to {@link list}. */
  record(ref: EventObjectRef, type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.list.push({ ref, type, reason, message, atMs: this.#clock.now() });
  }
}
