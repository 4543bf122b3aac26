package io.kvorum.node;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.slf4j.LoggerFactory;

/**
 * Collects what the node's loggers ({@code io.kvorum}, or the logger given) log while attached, one line per event:
 * {@code LEVEL [thread] logger: message (the throwable's message)}. Every node of an in-process
 * cluster logs through the same loggers, so a test tells them apart by what the lines say.
 */
public final class LogCapture extends AppenderBase<ILoggingEvent> {
    private final Queue<ILoggingEvent> events = new ConcurrentLinkedQueue<>();
    private final Logger logger;
    private final Map<Logger, Level> previousLevels = new HashMap<>();

    /** What the node's loggers log. */
    public LogCapture() {
        this("io.kvorum");
    }

    /** What {@code loggerName} and the loggers below it log ({@link Logger#ROOT_LOGGER_NAME}: every logger). */
    public LogCapture(String loggerName) {
        logger = (Logger) LoggerFactory.getLogger(loggerName);
    }

    public void attach() {
        setContext(logger.getLoggerContext());
        setName("test-capture-" + System.identityHashCode(this));
        start();
        logger.addAppender(this);
    }

    /**
     * Lets the INFO lines of the loggers named {@code loggers} through until {@link #detach} (the
     * tests' logging configuration keeps only WARN and above); they reach the build log too.
     */
    public LogCapture atInfo(String... loggers) {
        return at(Level.INFO, loggers);
    }

    /** As {@link #atInfo}, down to {@code level}. */
    public LogCapture at(Level level, String... loggers) {
        for (String name : loggers) {
            Logger classLogger = (Logger) LoggerFactory.getLogger(name);
            previousLevels.putIfAbsent(classLogger, classLogger.getLevel());
            classLogger.setLevel(level);
        }
        return this;
    }

    public void detach() {
        logger.detachAppender(this);
        stop();
        previousLevels.forEach(Logger::setLevel);
    }

    @Override
    protected void append(ILoggingEvent event) {
        events.add(event);
    }

    /** Every line logged at WARN or above. */
    public List<String> problems() {
        return lines(Level.WARN);
    }

    /** Every line logged at {@code level} or above. */
    public List<String> lines(Level level) {
        return events.stream().filter(e -> e.getLevel().isGreaterOrEqual(level))
                .map(e -> e.getLevel() + " [" + e.getThreadName() + "] " + e.getLoggerName() + ": " + e.getFormattedMessage()
                        + (e.getThrowableProxy() != null ? " (" + e.getThrowableProxy().getMessage() + ")" : ""))
                .toList();
    }
}
