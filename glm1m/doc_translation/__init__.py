"""`glm1m translate FILE --to LANG` for documents (Markdown, text, HTML, DOCX): the document cut
into sections in its own format (one module a format), each section translated with the whole
document in view, the output written back in the same format with its structure kept."""
