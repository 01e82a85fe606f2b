/** RSP-QL files, bundled as text by esbuild's text loader. */
declare module '*.rq' {
  const text: string;
  export default text;
}
