/**
 * Following one run's events: the log after a given sequence, then live ones, pushed to the
 * follower's sink as they are published (a Feed, see src/lib/feed.ts).
 *
 * All followers of a run in this process share one pubsub listener (RunListeners): a published
 * event reaches each follower by one synchronous call, by reference, with no queue and no promise
 * per follower. A follower whose sink is full stops taking live events (they are in the log) and,
 * once the sink has room, reads on from the log a page at a time, then goes live again: a slow
 * client is never an unbounded queue, and never holds the others back.
 */
import { onAbort } from '../../lib/on-abort.js';
import { iterateFeed, type Feed, type FeedSink } from '../../lib/feed.js';
import type { PubSub } from '../../lib/pubsub.js';
import type { Runtime } from '../../runtime.js';
import { endsRun, publishedEvents, readEvents, runEventsTopic, statusOfEvent, type RunEventRecord } from './event-log.js';
import { RunEventSchema } from './run-event.entity.js';

/** Events read from the log per statement when a follower catches up. */
export const CATCH_UP_PAGE = 100;

export interface FollowOptions {
  threadId: string;
  runId: string;
  /** Replay events with a sequence above this (0: from the start). */
  after: number;
  /** End when the run waits for tool outputs (REST streams), not only when it is terminal. */
  endAtRequiresAction: boolean;
}

interface Listener {
  hear(record: RunEventRecord): void;
  /** Its sink is full: it takes no live event until the sink asks for more. */
  readonly paused: boolean;
}

/** One pubsub listener per followed run, calling each of the run's followers in turn. */
class RunListeners {
  private readonly runs = new Map<string, { followers: Set<Listener>; unlisten: () => void }>();

  constructor(private readonly pubsub: PubSub) {}

  add(runId: string, follower: Listener): void {
    let run = this.runs.get(runId);
    if (!run) {
      const followers = new Set<Listener>();
      const unlisten = this.pubsub.on(runEventsTopic(runId), (payload) => {
        for (const each of followers) each.hear(payload as RunEventRecord);
      });
      this.runs.set(runId, (run = { followers, unlisten }));
    }
    run.followers.add(follower);
  }

  remove(runId: string, follower: Listener): void {
    const run = this.runs.get(runId);
    if (!run?.followers.delete(follower) || run.followers.size > 0) return;
    run.unlisten();
    this.runs.delete(runId);
  }

  /** Followers of the run in this process, and how many of them are paused (for tests and probes). */
  count(runId: string): { followers: number; paused: number } {
    const followers = [...(this.runs.get(runId)?.followers ?? [])];
    return { followers: followers.length, paused: followers.filter((each) => each.paused).length };
  }
}

const listenersByPubSub = new WeakMap<PubSub, RunListeners>();

export function runListeners(pubsub: PubSub): RunListeners {
  let listeners = listenersByPubSub.get(pubsub);
  if (!listeners) listenersByPubSub.set(pubsub, (listeners = new RunListeners(pubsub)));
  return listeners;
}

/**
 * - `reading`: catching up from the log; published events are only noted (the log has them).
 * - `live`: published events are pushed as they come.
 * - `paused`: the sink is full; published events are dropped until it asks for more.
 */
type State = 'idle' | 'reading' | 'live' | 'paused' | 'done';

/**
 * One follower (a Feed of the run's events). It listens before it reads the log and skips
 * anything at or below the last sequence pushed, so nothing is missed between the log and live
 * events and nothing is pushed twice; a published event beyond the next sequence (publication
 * order can differ from commit order across writers) is filled in from the log first.
 */
export class RunFollower implements Feed<RunEventRecord>, Listener {
  private sink: FeedSink<RunEventRecord> | null = null;
  private state: State = 'idle';
  private last: number;
  /** The highest sequence published while not live. */
  private heard = 0;
  private pushed = false;
  private unlistenShutdown = () => {};

  constructor(
    private readonly runtime: Runtime,
    private readonly options: FollowOptions,
  ) {
    this.last = Math.max(0, options.after);
  }

  get paused(): boolean {
    return this.state === 'paused';
  }

  start(sink: FeedSink<RunEventRecord>): void {
    if (this.state !== 'idle') return;
    this.sink = sink;
    runListeners(this.runtime.pubsub).add(this.options.runId, this);
    // Shutdown ends the stream after what it has pushed.
    this.unlistenShutdown = onAbort(this.runtime.shutdown, () => this.finish(true));
    void this.catchUp(true);
  }

  resume(): void {
    if (this.state === 'paused') void this.catchUp(false);
  }

  stop(): void {
    this.finish(false);
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<RunEventRecord> {
    return iterateFeed(this);
  }

  hear(record: RunEventRecord): void {
    if (this.state !== 'live') {
      if (this.state === 'reading') this.heard = Math.max(this.heard, record.sequence);
      return;
    }
    if (record.sequence <= this.last) return;
    if (record.sequence > this.last + 1) {
      this.heard = record.sequence;
      void this.catchUp(false);
      return;
    }
    this.deliver(record, true);
  }

  /** Pushes one record; false when the follower stopped taking records (ended, or the sink is full). */
  private deliver(record: RunEventRecord, mayPause: boolean): boolean {
    this.last = record.sequence;
    this.pushed = true;
    let room: boolean;
    try {
      room = this.sink!.push(record);
    } catch (error) {
      this.fail(error);
      return false;
    }
    if (endsRun(record.event) || (mayPause && this.pausesAt(record))) {
      this.finish(true);
      return false;
    }
    if (!room && this.state !== 'done') {
      this.state = 'paused';
      return false;
    }
    return this.state !== 'done';
  }

  private pausesAt(record: { event: string }): boolean {
    return this.options.endAtRequiresAction && statusOfEvent(record.event) === 'requires_action';
  }

  /**
   * Reads the log after the last sequence pushed, then goes live in the same turn as the last
   * read's answer, so that no publication slips in between. An event published while a read was
   * under way may be missing from its answer (it is committed, so the next read has it): the log
   * is read again until a read saw no publication. A published sequence the log never has (a
   * phantom) is ignored, as it would be live.
   * On the first read a `requires_action` pauses the stream only if it is the log's last event:
   * a run that was resumed since then goes on.
   */
  private async catchUp(first: boolean): Promise<void> {
    this.state = 'reading';
    const { runId } = this.options;
    try {
      for (;;) {
        const heard = this.heard;
        const page = await this.read(runId);
        if (this.state !== 'reading') return;
        const whole = page.length < CATCH_UP_PAGE;
        for (let i = 0; i < page.length; i++) {
          const lastOfLog = whole && i === page.length - 1;
          if (!this.deliver(page[i], !first || lastOfLog)) return;
        }
        if (whole && this.heard === heard) break;
      }
      if (first && !this.pushed) {
        const heard = this.heard;
        const rests = await this.restsAtLast();
        if (this.state !== 'reading') return;
        if (rests) return this.finish(true);
        if (this.heard !== heard) return void this.catchUp(first);
      }
      this.state = 'live';
    } catch (error) {
      this.fail(error);
    }
  }

  /** The log after `last` (a page): as this process published it when it keeps it (event-log.ts publishedEvents), else read. */
  private read(runId: string): Promise<readonly RunEventRecord[]> | readonly RunEventRecord[] {
    return publishedEvents(this.runtime, runId, this.last)?.slice(0, CATCH_UP_PAGE) ?? readEvents(this.runtime.fork(), runId, this.last, CATCH_UP_PAGE);
  }

  /** True when the log's last event is at or before `last` and ends (or pauses) the stream. */
  private async restsAtLast(): Promise<boolean> {
    const { runId } = this.options;
    // A kept log is of a run that has not ended (publishedEvents), and it has nothing after `last`.
    const kept = publishedEvents(this.runtime, runId, 0);
    if (kept) {
      const final = kept.at(-1);
      return final !== undefined && final.sequence <= this.last && this.pausesAt(final);
    }
    const final = await this.runtime.fork().findOne(RunEventSchema, { runId }, { orderBy: { sequence: 'desc' }, fields: ['sequence', 'event'] });
    if (!final || final.sequence > this.last) return false;
    return endsRun(final.event) || this.pausesAt(final);
  }

  private release(): boolean {
    if (this.state === 'done') return false;
    this.state = 'done';
    runListeners(this.runtime.pubsub).remove(this.options.runId, this);
    this.unlistenShutdown();
    return true;
  }

  private finish(end: boolean): void {
    if (this.release() && end) this.sink?.end();
  }

  private fail(error: unknown): void {
    if (this.release()) this.sink?.fail(error);
  }
}
