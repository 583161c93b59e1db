/** A consumer of the library on the module path. */
module example.consumer.module {
    requires dev.threadpool;
}
