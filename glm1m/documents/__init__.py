"""Reading a document and answering about the whole of it: pages (text with location markers),
budget (its tokens against the served context), split (chunks for map-reduce) and answer
(whole-document or map-reduce, with citations). Readers: pdf.py."""
