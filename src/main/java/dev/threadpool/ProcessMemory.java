package dev.threadpool;

/** placeholder */
public record ProcessMemory(long residentBytes, long peakResidentBytes, long virtualBytes, String source) {}
