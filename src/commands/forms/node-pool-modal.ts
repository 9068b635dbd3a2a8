import { escapeText } from '../../render/job-message.js';
import { checkName, MAX_COUNT, parseCount } from '../value-rules.js';
import { catalogStatusBlocks, loadingView, readType, TYPE_BLOCK, typeBlocks } from './catalog-blocks.js';
import {
  complete,
  context,
  type FormContext,
  type FormSpec,
  type FormValues,
  formModal,
  numberInput,
  readText,
  textInput,
} from './form-kit.js';

// `/gpu k8s pool add <c>` and `/gpu slurm pool add <c>` with only the cluster: the same form for both
// families, naming the pool, its instance type (from the catalogue) and how many nodes.

export const POOL_BLOCKS = { name: 'name', type: TYPE_BLOCK, count: 'count' } as const;
const B = POOL_BLOCKS;

function poolForm(family: 'k8s' | 'slurm'): FormSpec {
  const what = family === 'k8s' ? 'Kubernetes' : 'Slurm';
  const spec: FormSpec = {
    title: family === 'k8s' ? 'Add a K8s node pool' : 'Add a Slurm node pool',
    needsCatalog: true,
    firstBlock: B.name,
    view(ctx: FormContext) {
      if (!ctx.catalog) return loadingView(spec, ctx);
      return formModal(
        spec,
        ctx.metadata,
        [
          context(`${what} cluster *${escapeText(ctx.metadata.cluster ?? '?')}*`),
          ...catalogStatusBlocks(ctx),
          textInput(B.name, 'Pool name', { placeholder: 'e.g. gpu-a', maxLength: 63 }),
          ...typeBlocks(ctx, 'Instance type of the nodes'),
          numberInput(B.count, 'Number of nodes', { min: 1, max: MAX_COUNT, initial: 1 }),
        ],
        'Add pool',
      );
    },
    read(values: FormValues, ctx: FormContext) {
      const errors: Record<string, string> = {};
      const name = readText(values, B.name);
      if (name === undefined) errors[B.name] = 'Give the pool a name.';
      else if (checkName(name)) errors[B.name] = `${checkName(name)}.`;
      const type = readType(values);
      if ('errors' in type) Object.assign(errors, type.errors);
      const count = parseCount(readText(values, B.count) ?? '', MAX_COUNT);
      if (typeof count === 'string') errors[B.count] = `${count}.`;
      const cluster = ctx.metadata.cluster;
      if (cluster === undefined) errors[B.name] = 'This form lost its cluster; open it again.';
      if (Object.keys(errors).length > 0) return { ok: false as const, errors };
      const command = {
        modal: false,
        cluster: cluster!,
        name: name!,
        type: (type as { type: string }).type,
        count: count as number,
      };
      return complete(command, {}, { name: B.name, type: B.type, count: B.count }, B.name);
    },
  };
  return spec;
}

export const k8sPoolForm = poolForm('k8s');
export const slurmPoolForm = poolForm('slurm');
