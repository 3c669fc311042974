export async function runDemo(_args: string[]): Promise<number> {
  return 0;
}
