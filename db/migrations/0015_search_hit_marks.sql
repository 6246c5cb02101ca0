-- Bodies in the search index no longer hold the two private-use characters that mark hits in a
-- snippet (src/documents/search.ts): each becomes U+FFFD, as the index writes them from now on.
-- The update trigger re-indexes the rows it changes.
UPDATE `document_search` SET `body` = replace(replace(`body`, char(57344), char(65533)), char(57345), char(65533)) WHERE instr(`body`, char(57344)) > 0 OR instr(`body`, char(57345)) > 0;
