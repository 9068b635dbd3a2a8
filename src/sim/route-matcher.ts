import { OPERATIONS, type Operation, type Route, type RouteTable } from '../cloud/routes.js';

// Matches a method and path against a shape's route table (src/cloud/routes.ts), so the simulator
// answers exactly the routes the client uses and nothing else.

export interface RouteMatch {
  readonly operation: Operation;
  readonly route: Route;
  readonly params: Readonly<Record<string, string>>;
}

interface Compiled {
  readonly operation: Operation;
  readonly route: Route;
  readonly pattern: RegExp;
  readonly names: readonly string[];
  /** Literal segments count: a literal beats a {param} where both match (…/clusters/register). */
  readonly literals: number;
}

export interface RouteMatcher {
  match(method: string, path: string): RouteMatch | undefined;
}

export function createRouteMatcher(table: RouteTable): RouteMatcher {
  const compiled: Compiled[] = [];
  for (const operation of OPERATIONS) {
    const route = table[operation];
    if (!route) continue;
    const names: string[] = [];
    let literals = 0;
    const source = route.path
      .split('/')
      .map((segment) => {
        const param = /^\{(\w+)\}$/.exec(segment);
        if (param) {
          names.push(param[1]!);
          return '([^/]+)';
        }
        literals++;
        return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      })
      .join('/');
    compiled.push({ operation, route, pattern: new RegExp(`^${source}/?$`), names, literals });
  }
  compiled.sort((a, b) => b.literals - a.literals);
  return {
    match(method, path) {
      for (const c of compiled) {
        if (c.route.method !== method) continue;
        const m = c.pattern.exec(path);
        if (!m) continue;
        const params: Record<string, string> = {};
        try {
          c.names.forEach((name, i) => {
            params[name] = decodeURIComponent(m[i + 1]!);
          });
        } catch {
          continue;
        }
        return { operation: c.operation, route: c.route, params };
      }
      return undefined;
    },
  };
}
