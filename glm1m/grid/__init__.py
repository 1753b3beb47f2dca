"""Documents as batch work: the same questions over many documents, one cited table back
(`glm1m grid`). One noun a file: questions, answers (typed), citations, cells (the item builder),
checkpoint, job (the bounded fan-out), workbook (the writer)."""
