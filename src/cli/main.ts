export async function main(argv: string[]): Promise<number> {
  console.log('kloop', argv.slice(2).join(' '));
  return 0;
}
