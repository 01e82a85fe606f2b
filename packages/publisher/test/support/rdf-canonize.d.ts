/** rdf-canonize 5 ships no declarations: the one function the tests use. */
declare module 'rdf-canonize' {
  const canonize: {
    canonize(input: string, options: { readonly algorithm: 'RDFC-1.0'; readonly inputFormat: 'application/n-quads' }): Promise<string>;
  };
  export default canonize;
}
