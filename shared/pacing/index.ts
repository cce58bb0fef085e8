export { CallPacer, type GateOptions, keptBack } from './gate';
export { type HeldTurn, Turns, type TurnsOptions } from './turn';
export { intervalMs, knownSchedule, type RateLimit, type RateSchedule } from './schedule';
