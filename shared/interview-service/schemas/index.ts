export * from './primitives.schema';
export * from './resources.schema';
export * from './inputs.schema';
export * from './webhook-delivery.schema';
