/** A call that did not answer within its deadline. */
export class DeadlineExceeded extends Error {
  constructor(readonly ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = 'DeadlineExceeded';
  }
}

/**
 * `answer`, or DeadlineExceeded once `ms` have passed without it. A plain timer misjudges a
 * busy process: Node runs expired timers before it reads its sockets, so when the event loop is
 * held up longer than the deadline (a cold start, a burst of work on two cores), the timer fires
 * while the answer already waits, unread, in the socket, and a healthy Redis or database is
 * taken for a dead one. When the timer fires, the verdict waits one more turn of the loop
 * (setImmediate runs after the loop has polled its sockets), so an answer that has arrived
 * settles first; one that has not is late indeed.
 */
export function withinDeadline<T>(answer: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      setImmediate(() => {
        if (settled) return;
        settled = true;
        reject(new DeadlineExceeded(ms));
      });
    }, ms);
    answer.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
