import { readFileSync } from 'node:fs';
import ts from 'typescript';

export interface FunctionShape {
  file: string;
  line: number;
  name: string;
  lines: number;
  parameters: number;
}

/** Every function, method, arrow function and constructor of `files`, with its length in lines and its parameters. */
export function functionShapes(files: readonly string[]): FunctionShape[] {
  const shapes: FunctionShape[] = [];
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        shapes.push({
          file,
          line: start + 1,
          name: nameOf(node),
          lines: end - start + 1,
          parameters: node.parameters.length,
        });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return shapes;
}

function nameOf(node: ts.SignatureDeclaration): string {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (parent && ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  return '(anonymous)';
}
