import type { HomeDeps, HomePublisher } from './home-deps.js';

// The Home tab's publisher, made at start-up by the listener and the workers; what publishing needs
// (the view, the gathering, the chart) loads on the first Home tab published, not at start-up.

export function createHomePublisher(deps: HomeDeps): HomePublisher {
  return {
    publish: async (userId, options = {}) =>
      (await import('./publish-home.js')).publishHome(deps, userId, options.notice),
  };
}
