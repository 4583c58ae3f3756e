import { Kind, type FragmentDefinitionNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';
import type { FieldType } from '../types.js';
import type { ClassFields } from './where.js';

/**
 * The dotted paths of the leaf fields a resolver's field selects (`edges.node.name`,
 * `pageInfo.hasNextPage`), through inline and named fragments, without `__typename`: what Parse
 * Server reads with graphql-list-fields to decide what to fetch and include.
 */
export function selectedPaths(info: GraphQLResolveInfo): string[] {
  const paths: string[] = [];
  const walk = (set: SelectionSetNode | undefined, prefix: string, seen: Set<string>): void => {
    for (const selection of set?.selections ?? []) {
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        if (name === '__typename') continue;
        if (selection.selectionSet) walk(selection.selectionSet, `${prefix}${name}.`, seen);
        else paths.push(`${prefix}${name}`);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        walk(selection.selectionSet, prefix, seen);
      } else {
        const name = selection.name.value;
        const fragment: FragmentDefinitionNode | undefined = info.fragments[name];
        if (fragment && !seen.has(name)) walk(fragment.selectionSet, prefix, new Set([...seen, name]));
      }
    }
  };
  for (const node of info.fieldNodes) walk(node.selectionSet, '', new Set());
  return [...new Set(paths)];
}

/** The paths below `prefix` (`edges.node.`), with the prefix taken off. */
export const below = (paths: string[], prefix: string): string[] => paths.filter((p) => p.startsWith(prefix)).map((p) => p.slice(prefix.length));

/**
 * What to `include` for the selected object paths of `className`: every pointer (or array, which
 * may hold pointers) that the selection goes into, at any depth (`owner`, `owner.team`), so that
 * the nested objects come back whole, as Parse Server's `include` of the selected keys does.
 */
export function includesFor(paths: string[], className: string, classes: ClassFields): string[] {
  const includes = new Set<string>();
  for (const path of paths) {
    const parts = path.split('.');
    let fields: Readonly<Record<string, FieldType>> | undefined = classes.get(className);
    for (let i = 0; i < parts.length - 1; i++) {
      const type = fields?.[parts[i]!];
      if (!type || (type.type !== 'Pointer' && type.type !== 'Array')) break;
      includes.add(parts.slice(0, i + 1).join('.'));
      // An array's elements are of any class: deeper parts are included without checking them.
      fields = type.type === 'Pointer' ? classes.get(type.targetClass!) : undefined;
      if (type.type === 'Array') {
        for (let j = i + 2; j < parts.length; j++) includes.add(parts.slice(0, j).join('.'));
        break;
      }
    }
  }
  return [...includes];
}
