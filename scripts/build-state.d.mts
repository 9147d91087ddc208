// Types of scripts/build-state.mjs (for tests/build-state.test.ts).
export declare const BUILD_INPUTS: readonly string[];
export declare function sourcesHash(root: string): string;
export declare function folderHash(folder: string, except?: readonly string[]): string;
export declare function outputsHash(root: string): string;
export declare function sourcesChangedSince(root: string, sinceMs: number): boolean;
export declare function isFile(file: string): boolean;
export declare function isEditorFile(name: string): boolean;
export declare function readBuildStamp(root: string): { sources: string; outputs: string; builtAt: string } | undefined;
