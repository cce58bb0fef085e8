export {};

/**
 * `npm start`: until the pipeline is wired, this starts the interview-service sandbox alone.
 */
await import('./sandbox/interview-service/main');
