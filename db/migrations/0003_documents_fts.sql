-- Full-text search over document titles and bodies (FTS5, external content = document_search).
-- Titles follow the documents table through triggers; bodies are written by the search index in
-- src/documents/search.ts whenever the Yjs body changes. Prefix indexes keep "term*" queries cheap.
CREATE VIRTUAL TABLE `documents_fts` USING fts5(
	title,
	body,
	content = 'document_search',
	content_rowid = 'id',
	tokenize = 'unicode61 remove_diacritics 2',
	prefix = '2 3'
);
--> statement-breakpoint
CREATE TRIGGER `document_search_ai` AFTER INSERT ON `document_search` BEGIN
	INSERT INTO `documents_fts` (rowid, title, body) VALUES (new.id, new.title, new.body);
END;
--> statement-breakpoint
CREATE TRIGGER `document_search_ad` AFTER DELETE ON `document_search` BEGIN
	INSERT INTO `documents_fts` (`documents_fts`, rowid, title, body) VALUES ('delete', old.id, old.title, old.body);
END;
--> statement-breakpoint
CREATE TRIGGER `document_search_au` AFTER UPDATE OF title, body ON `document_search` BEGIN
	INSERT INTO `documents_fts` (`documents_fts`, rowid, title, body) VALUES ('delete', old.id, old.title, old.body);
	INSERT INTO `documents_fts` (rowid, title, body) VALUES (new.id, new.title, new.body);
END;
--> statement-breakpoint
CREATE TRIGGER `documents_search_ai` AFTER INSERT ON `documents` BEGIN
	INSERT INTO `document_search` (document_id, tenant_id, title, body, indexed_through) VALUES (new.id, new.tenant_id, new.title, '', 0);
END;
--> statement-breakpoint
CREATE TRIGGER `documents_search_au` AFTER UPDATE OF title ON `documents` BEGIN
	UPDATE `document_search` SET title = new.title WHERE document_id = new.id;
END;
--> statement-breakpoint
-- Documents that existed before this migration get a row; their bodies are indexed on the next start.
INSERT INTO `document_search` (document_id, tenant_id, title, body, indexed_through)
	SELECT id, tenant_id, title, '', 0 FROM `documents`;
