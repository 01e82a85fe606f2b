// A cluster worker that reads what its primary sends, and does nothing else.
process.on('message', () => {});
