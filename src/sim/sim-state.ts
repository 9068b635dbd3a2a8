// The simulated cloud's state and rules, without HTTP: projects and everything in them, capacity,
// account SSH keys, the instance state machine on the clock, and the count of create requests. Split
// by resource under src/sim/state/; this is the whole, as the routes and the control API use it.

import { SimClusterState } from './state/clusters.js';

export class SimState extends SimClusterState {}

export * from './state/types.js';
