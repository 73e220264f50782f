/** A command or its options misused: the message, then the usage. */
export class UsageError extends Error {}

/** Refused with its message alone (no usage after it): the command was right, the input was not. */
export class Refusal extends Error {}
